// ns3_ref: the ns-3 side of cclab's validation against ns-3 (VALIDATION.md, "Against ns-3").
//
// One bulk TCP flow over a dumbbell, mirroring validation/ns3/<case>.toml:
//
//   sender --(10 Gbit/s, 0 ms)-- L ==(bottleneck rate, delay, drop-tail N packets)==> R
//          --(10 Gbit/s, 0 ms)-- receiver
//
// Cases (--case=NAME):
//   cubic      TcpCubic alone (20 Mbit/s, 10 ms one way, 34-packet buffer)
//   newreno    TcpNewReno, 1 % random loss (RateErrorModel, packet unit) on the data direction
//              of the bottleneck (the receive side of R's bottleneck device)
//   bbr        TcpBbr, pacing enabled as ns-3's BBR example does (TcpSocketState::EnablePacing)
//   reroute    TcpCubic; behind R the data take one of two parallel links to R2 (20 ms or 5 ms
//              one way), the route at R switching every 3 s; packets already on the old link
//              drain on it (cclab `reroute`). ACKs return over a third, 0 ms link (cclab's
//              element acts on the data direction only). Bottleneck 5 ms one way, 83 packets.
//   ack_thin   TcpCubic; at L the ACKs arriving from R are thinned: one pure ACK in k = 4 per
//              flow goes on, ACKs with SACK blocks or ECE always go on, the newest withheld ACK
//              is released after 10 ms without a newer one (cclab `ack_thin`, hold = 10 ms)
//
// Exactly one queue: the traffic-control layer is removed from the bottleneck devices
// (Ipv4AddressHelper::Assign installs a pfifo_fast root qdisc by default), so the device's
// DropTail queue of N packets is the bottleneck queue; it holds the waiting packets, the one on
// the wire is not in it (as cclab's buffer). TCP settings are ns-3.37's defaults except
// SegmentSize = 1448 and SndBufSize = RcvBufSize = 4 MiB (ns-3's 128 KiB defaults would make the
// flow window-limited; cclab's receivers are not); they are printed in "config".
//
// Output: one JSON object on stdout (see run.py for the fields). Deterministic: ns-3's default
// RNG seed and run 1, overridable with --run.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <sstream>
#include <vector>

using namespace ns3;

namespace
{

const uint32_t kMss = 1448;

// ---- measurements -------------------------------------------------------------------------

struct Stats
{
    std::vector<double> rttSamplesMs; // exact send→ACK time of the oldest newly acked segment
    std::vector<double> srttMs;       // the socket's "RTT" trace source (its smoothed estimate)
    std::vector<double> cwndSamples;  // cwnd in segments, sampled every 200 ms
    std::vector<double> sojournMs;    // bottleneck queue sojourn (enqueue → dequeue)
    uint64_t retransmits = 0;         // data segments sent with seq below the highest sent
    uint64_t segmentsSent = 0;
    uint64_t fastRecoveries = 0;      // entries into CA_RECOVERY
    uint64_t rtos = 0;                // entries into CA_LOSS
    uint64_t queueDrops = 0;
    uint64_t linkLosses = 0;
    uint64_t acksThinned = 0;
    uint64_t acksForwarded = 0;
    uint32_t cwndBytes = 0;
    SequenceNumber32 highestSent{0};
    bool anySent = false;
    SequenceNumber32 highestAck{0};
    // first transmission time of each segment start, and whether it was retransmitted
    std::map<uint32_t, std::pair<Time, bool>> sent;
    // enqueue times of the packets in the bottleneck queue, oldest first (the queue is a FIFO
    // and a DropTailQueue drops before enqueueing; packet uids are not unique for TCP data)
    std::deque<Time> enqueued;
};

Stats g;

void
OnTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() == 0)
    {
        return;
    }
    SequenceNumber32 seq = h.GetSequenceNumber();
    SequenceNumber32 end = seq + p->GetSize();
    ++g.segmentsSent;
    if (g.anySent && seq < g.highestSent)
    {
        ++g.retransmits;
        auto it = g.sent.find(seq.GetValue());
        if (it != g.sent.end())
        {
            it->second.second = true;
        }
    }
    else
    {
        g.sent[seq.GetValue()] = {Simulator::Now(), false};
    }
    if (!g.anySent || end > g.highestSent)
    {
        g.highestSent = end;
        g.anySent = true;
    }
}

void
OnRx(Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (!(h.GetFlags() & TcpHeader::ACK))
    {
        return;
    }
    SequenceNumber32 ack = h.GetAckNumber();
    if (ack <= g.highestAck)
    {
        return;
    }
    g.highestAck = ack;
    // One sample per ACK that advances snd_una, from the oldest newly acked segment when it
    // was never retransmitted (Karn; TcpSocketBase::EstimateRtt takes the front of its
    // history the same way), at full time resolution (ns-3 itself measures through the 1 ms
    // timestamp clock).
    bool first = true;
    while (!g.sent.empty())
    {
        auto it = g.sent.begin();
        if (SequenceNumber32(it->first) + kMss > ack)
        {
            break; // not (fully) acknowledged yet
        }
        if (first && !it->second.second)
        {
            g.rttSamplesMs.push_back((Simulator::Now() - it->second.first).GetSeconds() * 1e3);
        }
        first = false;
        g.sent.erase(it);
    }
}

void
OnRtt(Time, Time v)
{
    if (v.IsStrictlyPositive())
    {
        g.srttMs.push_back(v.GetSeconds() * 1e3);
    }
}

void
OnCwnd(uint32_t, uint32_t v)
{
    g.cwndBytes = v;
}

void
OnCongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t s)
{
    if (s == TcpSocketState::CA_RECOVERY)
    {
        ++g.fastRecoveries;
    }
    else if (s == TcpSocketState::CA_LOSS)
    {
        ++g.rtos;
    }
}

void
SampleCwnd(Time interval, Time end)
{
    g.cwndSamples.push_back(double(g.cwndBytes) / kMss);
    if (Simulator::Now() + interval <= end)
    {
        Simulator::Schedule(interval, &SampleCwnd, interval, end);
    }
}

void
OnEnqueue(Ptr<const Packet> p)
{
    g.enqueued.push_back(Simulator::Now());
}

void
OnDequeue(Ptr<const Packet> p)
{
    if (!g.enqueued.empty())
    {
        g.sojournMs.push_back((Simulator::Now() - g.enqueued.front()).GetSeconds() * 1e3);
        g.enqueued.pop_front();
    }
}

void
OnQueueDrop(Ptr<const Packet>)
{
    ++g.queueDrops;
}

void
OnPhyRxDrop(Ptr<const Packet>)
{
    ++g.linkLosses;
}

// Connects a trace source and fails loudly when the name does not exist (ns-3 only returns
// false).
template <typename T, typename CB>
void
Connect(Ptr<T> object, const std::string& name, const CB& cb)
{
    NS_ABORT_MSG_UNLESS(object->TraceConnectWithoutContext(name, cb),
                        "no trace source " << name);
}

// ---- ACK thinning ---------------------------------------------------------------------------

// A receive "error model" on L's bottleneck device: it sees every packet arriving at L from R
// (with its PPP header) and drops the ACKs the thinner does not forward. A withheld ACK is kept
// and, when no newer ACK of its flow arrives within `hold`, handed to the device again
// (PointToPointNetDevice::Receive), passing the model that time.
class AckThinModel : public ErrorModel
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::CclabAckThinModel")
                                .SetParent<ErrorModel>()
                                .AddConstructor<AckThinModel>();
        return tid;
    }

    uint32_t k = 4;
    bool keepSignals = true;
    Time hold = MilliSeconds(10);
    Ptr<PointToPointNetDevice> device;

  private:
    struct Flow
    {
        uint32_t count = 0;
        Ptr<Packet> withheld;
        EventId release;
    };

    std::map<uint64_t, Flow> m_flows;
    bool m_bypass = false;

    bool DoCorrupt(Ptr<Packet> p) override
    {
        if (m_bypass)
        {
            return false;
        }
        Ptr<Packet> c = p->Copy();
        PppHeader ppp;
        c->RemoveHeader(ppp);
        if (ppp.GetProtocol() != 0x0021)
        {
            return false;
        }
        Ipv4Header ip;
        c->RemoveHeader(ip);
        if (ip.GetProtocol() != 6)
        {
            return false;
        }
        TcpHeader tcp;
        c->RemoveHeader(tcp);
        uint8_t flags = tcp.GetFlags() & ~(TcpHeader::PSH | TcpHeader::ECE | TcpHeader::CWR);
        if (c->GetSize() != 0 || flags != TcpHeader::ACK)
        {
            return false; // not a pure ACK
        }
        uint64_t key = (uint64_t(ip.GetSource().Get()) << 16) ^ tcp.GetSourcePort() ^
                       (uint64_t(tcp.GetDestinationPort()) << 48);
        Flow& f = m_flows[key];
        bool signal = (tcp.GetFlags() & TcpHeader::ECE) || tcp.HasOption(TcpOption::SACK);
        if (keepSignals && signal)
        {
            DropWithheld(f); // superseded by this newer ACK
            ++g.acksForwarded;
            return false;
        }
        if (++f.count >= k)
        {
            f.count = 0;
            DropWithheld(f);
            ++g.acksForwarded;
            return false;
        }
        if (hold.IsStrictlyPositive())
        {
            DropWithheld(f);
            f.withheld = p->Copy();
            f.release = Simulator::Schedule(hold, &AckThinModel::Release, this, key);
        }
        else
        {
            ++g.acksThinned;
        }
        return true;
    }

    void DropWithheld(Flow& f)
    {
        if (f.withheld)
        {
            f.withheld = nullptr;
            f.release.Cancel();
            ++g.acksThinned;
        }
    }

    void Release(uint64_t key)
    {
        Flow& f = m_flows[key];
        if (!f.withheld)
        {
            return;
        }
        Ptr<Packet> p = f.withheld;
        f.withheld = nullptr;
        f.count = 0;
        ++g.acksForwarded;
        m_bypass = true;
        device->Receive(p);
        m_bypass = false;
    }

    void DoReset() override
    {
    }
};

NS_OBJECT_ENSURE_REGISTERED(AckThinModel);

// ---- reroute --------------------------------------------------------------------------------

struct Reroute
{
    Ptr<Ipv4StaticRouting> routing; // R's static routing
    Ipv4Address dest;               // the receiver
    std::vector<std::pair<Ipv4Address, uint32_t>> paths; // next hop, interface on R
    uint32_t active = 0;
    Time period;
};

Reroute g_reroute;

void
InstallRoute(uint32_t path)
{
    Ptr<Ipv4StaticRouting> r = g_reroute.routing;
    for (uint32_t i = r->GetNRoutes(); i-- > 0;)
    {
        if (r->GetRoute(i).GetDest() == g_reroute.dest)
        {
            r->RemoveRoute(i);
        }
    }
    r->AddHostRouteTo(g_reroute.dest,
                      g_reroute.paths[path].first,
                      g_reroute.paths[path].second);
    g_reroute.active = path;
}

void
SwitchRoute(Time end)
{
    InstallRoute((g_reroute.active + 1) % g_reroute.paths.size());
    if (Simulator::Now() + g_reroute.period < end)
    {
        Simulator::Schedule(g_reroute.period, &SwitchRoute, end);
    }
}

// ---- output ---------------------------------------------------------------------------------

double
Mean(const std::vector<double>& v)
{
    if (v.empty())
    {
        return 0.0;
    }
    double s = 0;
    for (double x : v)
    {
        s += x;
    }
    return s / v.size();
}

double
Quantile(std::vector<double> v, double q)
{
    if (v.empty())
    {
        return 0.0;
    }
    std::sort(v.begin(), v.end());
    double pos = q * (v.size() - 1);
    size_t lo = size_t(pos);
    size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

std::string
AttrString(Ptr<Object> o, const std::string& name)
{
    TypeId::AttributeInformation info;
    TypeId tid = o->GetInstanceTypeId();
    while (true)
    {
        if (tid.LookupAttributeByName(name, &info))
        {
            Ptr<AttributeValue> v = info.checker->Create();
            o->GetAttribute(name, *v);
            return v->SerializeToString(info.checker);
        }
        if (tid == tid.GetParent())
        {
            return "?";
        }
        tid = tid.GetParent();
    }
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string caseName = "cubic";
    std::string rate = "20Mbps";
    double delayMs = 10.0;
    uint32_t bufferPackets = 34;
    double durationS = 30.0;
    double lossRate = 0.01;
    uint32_t ackK = 4;
    double holdMs = 10.0;
    double rerouteDelay0Ms = 20.0;
    double rerouteDelay1Ms = 5.0;
    double reroutePeriodS = 3.0;
    uint32_t run = 1;

    CommandLine cmd(__FILE__);
    cmd.AddValue("case", "cubic | newreno | bbr | reroute | ack_thin", caseName);
    cmd.AddValue("rate", "bottleneck rate (ns-3 DataRate)", rate);
    cmd.AddValue("delay", "bottleneck one-way delay, ms", delayMs);
    cmd.AddValue("buffer", "bottleneck drop-tail queue, packets", bufferPackets);
    cmd.AddValue("duration", "run length, s", durationS);
    cmd.AddValue("loss", "newreno: random loss rate of the data direction", lossRate);
    cmd.AddValue("k", "ack_thin: one pure ACK in k goes on", ackK);
    cmd.AddValue("hold", "ack_thin: release the newest withheld ACK after this many ms", holdMs);
    cmd.AddValue("reroute0", "reroute: extra one-way delay of path 0, ms", rerouteDelay0Ms);
    cmd.AddValue("reroute1", "reroute: extra one-way delay of path 1, ms", rerouteDelay1Ms);
    cmd.AddValue("period", "reroute: switch period, s", reroutePeriodS);
    cmd.AddValue("run", "RNG run number", run);
    cmd.Parse(argc, argv);

    const bool isReroute = caseName == "reroute";
    const bool isAckThin = caseName == "ack_thin";
    std::string cc;
    if (caseName == "cubic" || isReroute || isAckThin)
    {
        cc = "ns3::TcpCubic";
    }
    else if (caseName == "newreno")
    {
        cc = "ns3::TcpNewReno";
    }
    else if (caseName == "bbr")
    {
        cc = "ns3::TcpBbr";
        // As src/examples/tcp/tcp-bbr-example.cc does (TcpBbr also forces pacing on itself).
        Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(true));
    }
    else
    {
        std::fprintf(stderr, "error: unknown case `%s` (cubic, newreno, bbr, reroute, ack_thin)\n",
                     caseName.c_str());
        return 2;
    }

    RngSeedManager::SetRun(run);
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName(cc)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(kMss));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));

    const Time end = Seconds(durationS);

    // Nodes: 0 sender, 1 L, 2 R, 3 receiver, 4 R2 (reroute only).
    NodeContainer nodes;
    nodes.Create(isReroute ? 5 : 4);
    Ptr<Node> sender = nodes.Get(0);
    Ptr<Node> left = nodes.Get(1);
    Ptr<Node> right = nodes.Get(2);
    Ptr<Node> receiver = nodes.Get(3);
    InternetStackHelper stack;
    stack.Install(nodes);

    PointToPointHelper fast;
    fast.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    fast.SetChannelAttribute("Delay", TimeValue(Seconds(0)));

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(rate));
    bottleneck.SetChannelAttribute("Delay", TimeValue(MilliSeconds(delayMs)));
    bottleneck.SetQueue("ns3::DropTailQueue",
                        "MaxSize",
                        QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, bufferPackets)));

    NetDeviceContainer dAccess = fast.Install(sender, left);
    NetDeviceContainer dBottle = bottleneck.Install(left, right);
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.1.0", "255.255.255.0");
    addr.Assign(dAccess);
    addr.SetBase("10.0.2.0", "255.255.255.0");
    addr.Assign(dBottle);

    Ipv4InterfaceContainer iRecv;
    NetDeviceContainer dPaths[3];
    Ipv4InterfaceContainer iPaths[3];
    if (!isReroute)
    {
        NetDeviceContainer dRecv = fast.Install(right, receiver);
        addr.SetBase("10.0.3.0", "255.255.255.0");
        iRecv = addr.Assign(dRecv);
    }
    else
    {
        Ptr<Node> right2 = nodes.Get(4);
        const double pathDelay[3] = {rerouteDelay0Ms, rerouteDelay1Ms, 0.0};
        for (int i = 0; i < 3; ++i)
        {
            PointToPointHelper p;
            p.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
            p.SetChannelAttribute("Delay", TimeValue(MilliSeconds(pathDelay[i])));
            dPaths[i] = p.Install(right, right2);
            std::ostringstream base;
            base << "10.0." << (10 + i) << ".0";
            addr.SetBase(base.str().c_str(), "255.255.255.0");
            iPaths[i] = addr.Assign(dPaths[i]);
        }
        NetDeviceContainer dRecv = fast.Install(right2, receiver);
        addr.SetBase("10.0.3.0", "255.255.255.0");
        iRecv = addr.Assign(dRecv);
    }

    // One queue: drop the default root queue disc (pfifo_fast, installed by Assign) from the
    // bottleneck devices, leaving the device's DropTail queue.
    TrafficControlHelper tch;
    tch.Uninstall(dBottle);

    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    if (isReroute)
    {
        // Static routes take precedence over global routing (Ipv4ListRouting priorities 0 and
        // -10). R sends data for the receiver over path 0 or 1; R2 sends everything back over
        // the 0 ms path 2.
        Ipv4StaticRoutingHelper srh;
        Ptr<Ipv4> ipR = right->GetObject<Ipv4>();
        Ptr<Ipv4> ipR2 = nodes.Get(4)->GetObject<Ipv4>();
        g_reroute.routing = srh.GetStaticRouting(ipR);
        g_reroute.dest = iRecv.GetAddress(1);
        for (int i = 0; i < 2; ++i)
        {
            g_reroute.paths.emplace_back(iPaths[i].GetAddress(1),
                                         ipR->GetInterfaceForDevice(dPaths[i].Get(0)));
        }
        g_reroute.period = Seconds(reroutePeriodS);
        InstallRoute(0);
        Ptr<Ipv4StaticRouting> r2 = srh.GetStaticRouting(ipR2);
        r2->AddNetworkRouteTo(Ipv4Address("10.0.1.0"),
                              Ipv4Mask("255.255.255.0"),
                              iPaths[2].GetAddress(0),
                              ipR2->GetInterfaceForDevice(dPaths[2].Get(1)));
        Simulator::Schedule(g_reroute.period, &SwitchRoute, end);
    }

    if (caseName == "newreno")
    {
        Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
        em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
        em->SetRate(lossRate);
        dBottle.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(em));
        Connect(dBottle.Get(1), "PhyRxDrop", MakeCallback(&OnPhyRxDrop));
    }

    if (isAckThin)
    {
        Ptr<AckThinModel> em = CreateObject<AckThinModel>();
        em->k = ackK;
        em->hold = MilliSeconds(holdMs);
        em->device = DynamicCast<PointToPointNetDevice>(dBottle.Get(0));
        dBottle.Get(0)->SetAttribute("ReceiveErrorModel", PointerValue(em));
    }

    // Bottleneck queue: the DropTail queue of L's bottleneck device.
    Ptr<Queue<Packet>> q = DynamicCast<PointToPointNetDevice>(dBottle.Get(0))->GetQueue();
    Connect(q, "Enqueue", MakeCallback(&OnEnqueue));
    Connect(q, "Dequeue", MakeCallback(&OnDequeue));
    Connect(q, "Drop", MakeCallback(&OnQueueDrop));
    // Without a queue disc, a full device queue is stopped (flow control through
    // NetDeviceQueueInterface) and TrafficControlLayer::Send drops the packet itself: the
    // bottleneck's tail drops appear in the layer's "Drop" trace, not the queue's. L forwards
    // nothing else to a stopped device here (the access devices are 10 Gbit/s).
    Connect(left->GetObject<TrafficControlLayer>(), "TcDrop", MakeCallback(&OnQueueDrop));
    NS_ABORT_MSG_IF(left->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(
                        dBottle.Get(0)),
                    "a queue disc is still installed on the bottleneck");

    const uint16_t port = 5000;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApp = sinkHelper.Install(receiver);
    sinkApp.Start(Seconds(0));
    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(iRecv.GetAddress(1), port));
    bulk.SetAttribute("MaxBytes", UintegerValue(0));
    ApplicationContainer bulkApp = bulk.Install(sender);
    bulkApp.Start(Seconds(0));

    // The sender's socket exists once the application has started (its SYN leaves at 0).
    Ptr<BulkSendApplication> app = DynamicCast<BulkSendApplication>(bulkApp.Get(0));
    Ptr<Socket> sock;
    Simulator::Schedule(MicroSeconds(1), [&]() {
        sock = app->GetSocket();
        Connect(sock, "Tx", MakeCallback(&OnTx));
        Connect(sock, "Rx", MakeCallback(&OnRx));
        Connect(sock, "RTT", MakeCallback(&OnRtt));
        Connect(sock, "CongestionWindow", MakeCallback(&OnCwnd));
        Connect(sock, "CongState", MakeCallback(&OnCongState));
    });
    Simulator::Schedule(MilliSeconds(200), &SampleCwnd, MilliSeconds(200), end);

    Simulator::Stop(end);
    Simulator::Run();

    Ptr<PacketSink> sink = DynamicCast<PacketSink>(sinkApp.Get(0));
    double goodputMbps = sink->GetTotalRx() * 8.0 / durationS / 1e6;
    Ptr<TcpL4Protocol> l4 = sender->GetObject<TcpL4Protocol>();

    std::printf("{\n");
    std::printf("  \"case\": \"%s\",\n", caseName.c_str());
    std::printf("  \"ns3_version\": \"3.37\",\n");
    std::printf("  \"config\": {\"socket_type\": \"%s\", \"recovery_type\": \"%s\", "
                "\"rtt_estimator\": \"%s\", \"SegmentSize\": %s, \"InitialCwnd\": %s, "
                "\"DelAckTimeout\": \"%s\", \"DelAckCount\": %s, \"MinRto\": \"%s\", "
                "\"ClockGranularity\": \"%s\", \"ReTxThreshold\": %s, \"LimitedTransmit\": %s, "
                "\"Sack\": %s, \"Timestamp\": %s, \"SndBufSize\": %s, \"RcvBufSize\": %s, "
                "\"bottleneck\": \"%s\", \"delay_ms\": %g, \"buffer_packets\": %u},\n",
                cc.c_str(),
                AttrString(l4, "RecoveryType").c_str(),
                AttrString(l4, "RttEstimatorType").c_str(),
                AttrString(sock, "SegmentSize").c_str(),
                AttrString(sock, "InitialCwnd").c_str(),
                AttrString(sock, "DelAckTimeout").c_str(),
                AttrString(sock, "DelAckCount").c_str(),
                AttrString(sock, "MinRto").c_str(),
                AttrString(sock, "ClockGranularity").c_str(),
                AttrString(sock, "ReTxThreshold").c_str(),
                AttrString(sock, "LimitedTransmit").c_str(),
                AttrString(sock, "Sack").c_str(),
                AttrString(sock, "Timestamp").c_str(),
                AttrString(sock, "SndBufSize").c_str(),
                AttrString(sock, "RcvBufSize").c_str(),
                rate.c_str(),
                delayMs,
                bufferPackets);
    std::printf("  \"duration_s\": %g,\n", durationS);
    std::printf("  \"goodput_mbps\": %.6f,\n", goodputMbps);
    std::printf("  \"bytes_delivered\": %llu,\n", (unsigned long long)sink->GetTotalRx());
    std::printf("  \"rtt_mean_ms\": %.6f,\n", Mean(g.rttSamplesMs));
    std::printf("  \"rtt_p50_ms\": %.6f,\n", Quantile(g.rttSamplesMs, 0.5));
    std::printf("  \"rtt_p95_ms\": %.6f,\n", Quantile(g.rttSamplesMs, 0.95));
    std::printf("  \"rtt_samples\": %zu,\n", g.rttSamplesMs.size());
    std::printf("  \"srtt_trace_mean_ms\": %.6f,\n", Mean(g.srttMs));
    std::printf("  \"srtt_trace_p50_ms\": %.6f,\n", Quantile(g.srttMs, 0.5));
    std::printf("  \"srtt_trace_p95_ms\": %.6f,\n", Quantile(g.srttMs, 0.95));
    std::printf("  \"queue_delay_mean_ms\": %.6f,\n", Mean(g.sojournMs));
    std::printf("  \"queue_sojourn_samples\": %zu,\n", g.sojournMs.size());
    std::printf("  \"queue_drops\": %llu,\n", (unsigned long long)g.queueDrops);
    std::printf("  \"link_losses\": %llu,\n", (unsigned long long)g.linkLosses);
    std::printf("  \"segments_sent\": %llu,\n", (unsigned long long)g.segmentsSent);
    std::printf("  \"retransmits\": %llu,\n", (unsigned long long)g.retransmits);
    std::printf("  \"fast_recoveries\": %llu,\n", (unsigned long long)g.fastRecoveries);
    std::printf("  \"rto_count\": %llu,\n", (unsigned long long)g.rtos);
    std::printf("  \"cwnd_mean_segments\": %.6f,\n", Mean(g.cwndSamples));
    std::printf("  \"acks_forwarded\": %llu,\n", (unsigned long long)g.acksForwarded);
    std::printf("  \"acks_thinned\": %llu\n", (unsigned long long)g.acksThinned);
    std::printf("}\n");

    Simulator::Destroy();
    return 0;
}
